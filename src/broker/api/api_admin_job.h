/* api_admin_job.h -- how an admin request waits for its job of the admin
 * service (broker/core/admin.h): api_admin.c's requests and
 * api_partition_admin.c's share it. */
#ifndef KIPPER_BROKER_API_ADMIN_JOB_H
#define KIPPER_BROKER_API_ADMIN_JOB_H

#include "broker/core/admin.h"

/* Submits j for req, which then waits for it (up to timeout_ms when > 0):
 * REQ_WAIT, or REQ_CLOSE (j freed) when the service's queue is full. */
req_status_t api_admin_wait_for_job(broker_t *b, broker_request_t *req, admin_job_t *j, int64_t timeout_ms);
/* 1 when req's job is done and its changes are visible in the cluster view
 * (or req timed out): the answer can be built now. 0 after arranging to be
 * woken again. */
int api_admin_job_ready(broker_t *b, broker_request_t *req);
/* An item's result for the answer: its error and message (NULL: none),
 * REQUEST_TIMED_OUT when req timed out before the change showed. */
int16_t api_admin_item_error(broker_t *b, const broker_request_t *req, const admin_job_t *j, const admin_item_t *it,
                             const char **message);

#endif
