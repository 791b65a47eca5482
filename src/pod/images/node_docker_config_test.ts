import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import {
  NODE_DOCKER_CONFIG_LIFETIME_MS,
  NodeDockerConfig,
  nodeDockerConfigFiles,
} from "./node_docker_config.ts";

Deno.test("nodeDockerConfigFiles(): every config.json (root dir, cwd, $HOME/.docker, /.docker) before every .dockercfg", () => {
  assert.deepEqual(
    nodeDockerConfigFiles({
      rootDir: "/var/lib/kubelet",
      cwd: "/",
      home: "/root",
    })
      .map((f) => f.file),
    [
      "/var/lib/kubelet/config.json",
      "/config.json",
      "/root/.docker/config.json",
      "/.docker/config.json",
      "/var/lib/kubelet/.dockercfg",
      "/.dockercfg",
      "/root/.dockercfg",
    ],
  );
});

Deno.test("NodeDockerConfig: the first valid file wins, invalid ones are skipped with a warning; re-read after five minutes", async () => {
  const disk: Record<string, string> = {
    "/var/lib/kubelet/config.json": "{not json",
    "/root/.docker/config.json": JSON.stringify({
      auths: { "127.0.0.1:5001": { auth: btoa("kts:kts-secret") } },
    }),
    "/.dockercfg": JSON.stringify({
      "quay.io": { username: "q", password: "p" },
    }),
  };
  const reads: string[] = [];
  const clock = new FakeClock(0);
  const logger = new CaptureLogger();
  const node = new NodeDockerConfig(
    { rootDir: "/var/lib/kubelet", home: "/root" },
    {
      read: (path) => {
        reads.push(path);
        return Promise.resolve(disk[path]);
      },
      clock,
      logger,
    },
  );
  assert.deepEqual(await node.config(), {
    "127.0.0.1:5001": { auth: btoa("kts:kts-secret") },
  });
  assert.ok(
    logger.records.some((r) =>
      r.msg === "Ignoring an invalid docker config file" &&
      r.fields["path"] === "/var/lib/kubelet/config.json"
    ),
  );
  const first = reads.length;
  delete disk["/root/.docker/config.json"];
  await node.config();
  assert.equal(reads.length, first, "cached");
  await clock.advance(NODE_DOCKER_CONFIG_LIFETIME_MS);
  assert.deepEqual(await node.config(), {
    "quay.io": { username: "q", password: "p" },
  });
});

Deno.test("NodeDockerConfig: an entry whose auth is not base64(user:password) makes its file invalid", async () => {
  const node = new NodeDockerConfig({ rootDir: "/r" }, {
    read: (path) =>
      Promise.resolve(
        path === "/r/config.json"
          ? JSON.stringify({ auths: { r: { auth: btoa("no-colon") } } })
          : undefined,
      ),
    clock: new FakeClock(0),
    logger: new CaptureLogger(),
  });
  assert.deepEqual(await node.config(), {});
});
