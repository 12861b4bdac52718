// admin.js -- one KafkaJS admin call, for the integration tests:
//   node admin.js <bootstrap> <method> '<json argument>'
// prints the call's result as JSON on stdout; a failure is a message on
// stderr and exit status 1.
'use strict';
const { Kafka, logLevel } = require('kafkajs');

async function main() {
    const [bootstrap, method, arg] = process.argv.slice(2);
    const kafka = new Kafka({
        clientId: 'kipper-test',
        brokers: bootstrap.split(','),
        logLevel: logLevel.NOTHING,
        retry: { retries: 3 },
    });
    const admin = kafka.admin();
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
    process.stderr.write(`${e.name}: ${e.message} ${JSON.stringify(e.type || '')}\n`);
    process.exit(1);
});
