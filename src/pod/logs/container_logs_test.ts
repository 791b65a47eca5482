import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { FakeRuntime } from "../../runtime/testing.ts";
import { CONTAINER_LOGS_DIR } from "./container_log_links.ts";
import { createContainerLogs } from "./container_logs.ts";

const deps = () => ({
  runtime: new FakeRuntime(),
  clock: new FakeClock(),
  logger: new CaptureLogger(),
});

Deno.test("createContainerLogs() links in /var/log/containers whatever podLogsDir is", () => {
  // log shippers and the node e2e suite look only there (upstream's fixed directory)
  for (const podLogsDir of [undefined, "/var/log/pods", "/data/pod-logs"]) {
    const config = { podLogsDir, containerLogMaxFiles: 3 };
    assert.equal(
      createContainerLogs(deps(), config).links.dir,
      CONTAINER_LOGS_DIR,
    );
  }
  assert.equal(CONTAINER_LOGS_DIR, "/var/log/containers");
  assert.equal(
    createContainerLogs({ ...deps(), linksDir: "/tmp/t/links" }, {}).links.dir,
    "/tmp/t/links",
  );
});
