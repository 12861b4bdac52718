/* dev.c -- `kipper dev [dir]`: for now one keeper on 127.0.0.1:2181 in the
 * foreground, with its data under dir (default ./kipper-dev). It grows into
 * the 3-keeper, 3-broker cluster as the ensemble and broker land. */
#define _GNU_SOURCE
#include "dev.h"
#include "../base/log.h"
#include "../keeper/keeper.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int dev_main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "kipper-dev";
    char data_dir[600], cfg_path[600];
    snprintf(data_dir, sizeof(data_dir), "%s/keeper1", dir);
    snprintf(cfg_path, sizeof(cfg_path), "%s/keeper1.cfg", dir);
    if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || (mkdir(data_dir, 0755) < 0 && errno != EEXIST)) {
        log_error("cannot create %s: %s", data_dir, strerror(errno));
        return 1;
    }
    FILE *f = fopen(cfg_path, "w");
    if (!f) {
        log_error("cannot write %s: %s", cfg_path, strerror(errno));
        return 1;
    }
    fprintf(f,
            "# written by kipper dev\n"
            "tickTime=2000\n"
            "dataDir=%s\n"
            "clientPort=2181\n"
            "clientPortAddress=127.0.0.1\n"
            "4lw.commands.whitelist=*\n",
            data_dir);
    if (fclose(f) != 0) {
        log_error("cannot write %s: %s", cfg_path, strerror(errno));
        return 1;
    }
    printf("kipper dev: keeper at 127.0.0.1:2181 (data in %s)\n"
           "  try: /usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:2181\n"
           "  Ctrl-C stops it.\n",
           data_dir);
    fflush(stdout);
    char *keeper_argv[] = {"keeper", cfg_path, NULL};
    return keeper_main(2, keeper_argv);
}
