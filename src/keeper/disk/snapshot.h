/* snapshot.h -- snapshots of the data tree and the live sessions, in
 * ZooKeeper's own layout (FileSnap / SerializeUtils.serializeSnapshot /
 * DataTree.serialize); the same serializer feeds a leader's SNAP sync of a
 * follower (keeper/zab/leader.c).
 *
 * File: dataDir/version-2/snapshot.<last zxid in hex>, written as
 * snapshot.<zxid>.tmp, fsynced, renamed, and the folder fsynced. Layout:
 *   FileHeader {int magic "ZKSN", int version 2, long dbid -1}
 *   int session count, then {long id, int timeout} per session
 *   the ACL cache: int count, then {long id, vector<ACL>} per distinct ACL
 *   every znode, parents before children: {string path ("" for the root),
 *     DataNode {buffer data, long acl id, StatPersisted}}, then the path "/"
 *   long Adler-32 of every byte before it (the file header included, as
 *   ZooKeeper's CheckedOutputStream sums them), then the string "/"
 * Reading checks every length against what is left and the checksum at the
 * end; a snapshot that fails either is refused as a whole. ZooKeeper's
 * compressed snapshots (snapshot.<zxid>.gz, .snappy) are read too, the same
 * layout once decompressed (snapshot_codec.h). */
#ifndef KIPPER_KEEPER_SNAPSHOT_H
#define KIPPER_KEEPER_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "keeper/data/tree.h"
#include "snapshot_codec.h"

typedef struct {
    int64_t id;
    int32_t timeout_ms;
} snapshot_session_t;

/* Where serialized bytes go: return 0, or -1 to stop with an error. */
typedef int (*snapshot_sink_fn)(void *arg, const void *data, size_t len);

/* Stream sessions and tree in the layout above (from the session count on:
 * no file header, no checksum; the file writer adds those). 0 or -1. */
int snapshot_serialize(const tree_t *tree, const snapshot_session_t *sessions, size_t nsessions,
                       snapshot_sink_fn sink, void *arg);

/* Write dir/snapshot.<zxid> atomically (tmp file, fsync, rename, fsync dir).
 * 0, or -1 with a message in err. Safe to call in a forked child. */
int snapshot_write_file(const char *dir, int64_t zxid, const tree_t *tree, const snapshot_session_t *sessions,
                        size_t nsessions, char *err, size_t errlen);

/* Load one snapshot file into a new tree (watches fire through wm, which may
 * be NULL). On success returns 0 with *tree_out, the sessions (malloc'd) and
 * the zxid from the file name; on any damage returns -1 with err and leaves
 * nothing allocated. */
int snapshot_load_file(const char *path, watch_manager_t *wm, tree_t **tree_out, snapshot_session_t **sessions,
                       size_t *nsessions, int64_t *zxid, char *err, size_t errlen);

/* Load a serialized body (what snapshot_serialize produced: sessions and
 * tree, no file header or checksum), as a follower receives it in a SNAP
 * sync. Same checks and ownership rules as snapshot_load_file; the caller
 * sets the tree's zxid. */
int snapshot_load_buffer(const uint8_t *data, size_t len, watch_manager_t *wm, tree_t **tree_out,
                         snapshot_session_t **sessions, size_t *nsessions, char *err, size_t errlen);

/* A snapshot file found in a folder: its zxid, and how it is compressed
 * (ZooKeeper's snapshot.<zxid>.gz and .snappy: snapshot_codec.h). */
typedef struct {
    int64_t zxid;
    snapshot_codec_t codec;
} snapshot_file_t;

/* dir's snapshot files, newest first (malloc'd; *count may be 0).
 * Temporary and malformed names are ignored. 0 or -1. */
int snapshot_list(const char *dir, snapshot_file_t **files, size_t *count);

/* "<dir>/snapshot.<zxid in lowercase hex>": where kipper writes one. */
void snapshot_path(char *out, size_t outlen, const char *dir, int64_t zxid);
/* The path of a file snapshot_list found (its suffix included). */
void snapshot_file_path(char *out, size_t outlen, const char *dir, const snapshot_file_t *f);

#endif
