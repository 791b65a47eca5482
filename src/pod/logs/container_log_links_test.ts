import assert from "node:assert/strict";
import { CaptureLogger } from "../../log/testing.ts";
import {
  containerIdFromLinkName,
  ContainerLogLinks,
  denoLogLinkFs,
  legacyLogLinkPath,
} from "./container_log_links.ts";

const REF = {
  podName: "web",
  podNamespace: "prod",
  containerName: "app",
  containerId: "abc123",
};

Deno.test("legacyLogLinkPath() names the link as upstream and cuts it to 255 characters", () => {
  assert.equal(
    legacyLogLinkPath("/var/log/containers", REF),
    "/var/log/containers/web_prod_app-abc123.log",
  );
  const long = legacyLogLinkPath("/d", { ...REF, podName: "p".repeat(300) });
  assert.equal(long.length, "/d/".length + 255);
  assert.ok(long.endsWith("pp.log"));
  assert.equal(containerIdFromLinkName("web_prod_app-abc123.log"), "abc123");
  assert.equal(containerIdFromLinkName("README"), undefined);
});

for (const kind of ["symlink", "hardlink"] as const) {
  Deno.test(`ContainerLogLinks makes, removes and sweeps ${kind}s`, async () => {
    const root = await Deno.makeTempDir();
    try {
      const logFile = `${root}/pods/prod_web_u1/app/0.log`;
      await Deno.mkdir(`${root}/pods/prod_web_u1/app`, { recursive: true });
      await Deno.writeTextFile(logFile, "hello\n");
      const links = new ContainerLogLinks({
        fs: denoLogLinkFs({ kind }),
        logger: new CaptureLogger(),
      }, { dir: `${root}/containers` });
      await links.link(REF, logFile);
      const path = `${root}/containers/web_prod_app-abc123.log`;
      assert.equal(await Deno.readTextFile(path), "hello\n");
      assert.equal((await Deno.lstat(path)).isSymlink, kind === "symlink");
      if (kind === "symlink") assert.equal(await Deno.readLink(path), logFile);
      // no link for a container without a log file
      await links.link({ ...REF, containerId: "nolog" }, `${root}/missing.log`);
      assert.equal(
        [...Deno.readDirSync(`${root}/containers`)].length,
        1,
      );
      // a second container's link whose log went; one running container keeps its link
      await links.link({ ...REF, containerId: "gone" }, logFile);
      await links.link({ ...REF, containerId: "alive" }, logFile);
      await Deno.remove(logFile);
      const removed = await links.removeStale((id) =>
        Promise.resolve(id === "alive")
      );
      assert.equal(removed, kind === "symlink" ? 2 : 0);
      if (kind === "hardlink") {
        // hard links keep the content: stale only once the last other name is gone
        await links.remove(REF);
        await links.remove({ ...REF, containerId: "alive" });
        assert.equal(await links.removeStale(() => Promise.resolve(false)), 1);
      } else {
        await links.remove({ ...REF, containerId: "alive" });
      }
      assert.deepEqual([...Deno.readDirSync(`${root}/containers`)], []);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
