// admin.js -- one KafkaJS admin call, for the integration tests:
//   node admin.js <bootstrap> <method> '<json argument>'
// prints the call's result as JSON on stdout; a failure is one line of JSON
// on stderr, {name, message, type, code, topic, partition, errors} (errors:
// the parts of a KafkaJSAggregateError, described alike, e.g. one per
// partition an AlterPartitionReassignments answer refused), and exit status 1.
//
// Any method of KafkaJS's admin client may be named. KafkaJS 2.2.4 has no
// ElectLeaders (its request table marks the API not implemented, and the
// admin client has no election method), and its alterPartitionReassignments
// refuses a null replica list before sending anything, so it cannot send
// Kafka's cancel either.
'use strict';
const { Kafka, logLevel } = require('kafkajs');

function describeError(e) {
    const out = { name: e.name, message: e.message, type: e.type || null, code: e.code === undefined ? null : e.code };
    if (e.topic !== undefined)
        out.topic = e.topic;
    if (e.partition !== undefined)
        out.partition = e.partition;
    if (Array.isArray(e.errors))
        out.errors = e.errors.map(describeError);
    return out;
}

async function main() {
    const [bootstrap, method, arg] = process.argv.slice(2);
    const kafka = new Kafka({
        clientId: 'kipper-test',
        brokers: bootstrap.split(','),
        logLevel: logLevel.NOTHING,
        retry: { retries: 3 },
    });
    const admin = kafka.admin();
    if (typeof admin[method] !== 'function')
        throw new Error(`KafkaJS's admin client has no method ${method}`);
    await admin.connect();
    try {
        const args = JSON.parse(arg || '{}');
        // deleteTopicRecords finds the leaders in metadata it does not load itself.
        if (args.topic)
            await admin.fetchTopicMetadata({ topics: [args.topic] });
        const result = await admin[method](args);
        process.stdout.write(JSON.stringify(result === undefined ? null : result) + '\n');
    } finally {
        await admin.disconnect();
    }
}

main().catch((e) => {
    process.stderr.write(JSON.stringify(describeError(e)) + '\n');
    process.exit(1);
});
