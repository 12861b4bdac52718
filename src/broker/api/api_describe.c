/* api_describe.c -- DescribeCluster: live brokers, cluster id, a controller
 * to send admin requests to (DescribeConfigs is api_configs.c's). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"

#include <stdio.h>
#include <string.h>


req_status_t api_describe_cluster(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    if (req->api_version >= 1 && KV_INT(req->body, DescribeClusterRequest, EndpointType) != 1) {
        /* only broker endpoints exist */
        KV_SET_INT(resp, DescribeClusterResponse, ErrorCode, KERR_UNSUPPORTED_VERSION);
        KV_SET_STR(ra, resp, DescribeClusterResponse, ErrorMessage, "only the broker endpoint type is served");
        return api_answer(c, req, resp);
    }
    KV_SET_STR(ra, resp, DescribeClusterResponse, ClusterId, b->cluster_id);
    KV_SET_INT(resp, DescribeClusterResponse, ControllerId, b->cfg.broker_id);
    kafka_value_t *brokers = KV_SET_ARRAY(ra, resp, DescribeClusterResponse, Brokers, (uint32_t)b->nbrokers);
    if (!brokers)
        return REQ_CLOSE;
    for (int i = 0; i < b->nbrokers; i++) {
        KV_SET_INT(kv_at(brokers, (uint32_t)i), DescribeClusterBroker, BrokerId, b->brokers[i].id);
        KV_SET_STR(ra, kv_at(brokers, (uint32_t)i), DescribeClusterBroker, Host, b->brokers[i].ep.host);
        KV_SET_INT(kv_at(brokers, (uint32_t)i), DescribeClusterBroker, Port, b->brokers[i].ep.port);
        if (b->brokers[i].ep.rack[0])
            KV_SET_STR(ra, kv_at(brokers, (uint32_t)i), DescribeClusterBroker, Rack, b->brokers[i].ep.rack);
    }
    if (KV_INT(req->body, DescribeClusterRequest, IncludeClusterAuthorizedOperations))
        KV_SET_INT(resp, DescribeClusterResponse, ClusterAuthorizedOperations, 0x1FA0);
    return api_answer(c, req, resp);
}
