/**
 * The planned permission lists with `--csi-driver` are enough for the CSI node side: under
 * exactly those lists, the plugin watcher registers a real CSI plugin (peers/csihostpath, `bash
 * scripts/peers.sh csi-hostpath`) from `<root>/plugins_registry` over its registration and CSI
 * sockets, and a socket the lists do not name is refused with the grant it lacks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  parseListsArgs,
  planFor,
  runtimeFlags,
} from "../../scripts/permission_lists.ts";
import { CHILD_ENV, ROOT } from "./_helpers.ts";
import { peersOutput } from "../_peers.ts";

const DRIVER = "hostpath.csi.kts.test";

const driver = Deno.build.os === "linux"
  ? await peersOutput("csi-hostpath-path")
  : undefined;
if (!driver) {
  // deno-lint-ignore no-console
  console.log("skipping csi_grant_test: bash scripts/peers.sh csi-hostpath");
}

Deno.test({
  name:
    "compile lists with --csi-driver: a CSI plugin registers; an unnamed socket is refused with the grant",
  ignore: !driver,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "kts-csi-grant-" });
    const root = join(dir, "root");
    await Deno.mkdir(join(root, "plugins_registry"), { recursive: true });
    const { request } = parseListsArgs([
      `--root-dir=${root}`,
      `--cert-dir=${join(root, "pki")}`,
      "--container-runtime-endpoint=unix:///run/kts-csi-grant/none.sock",
      `--csi-driver=${DRIVER}`,
    ]);
    const flags = runtimeFlags(await planFor(request, dir));
    // a live socket in the granted root dir: only the missing `unix:` grant may stop it
    const ungranted = join(root, "plugins_registry", "other-reg.sock");
    using _listener = Deno.listen({ transport: "unix", path: ungranted });
    const registration = `${root}/plugins_registry/${DRIVER}-reg.sock`;
    const plugin = new Deno.Command(driver!, {
      args: [
        `--driver-name=${DRIVER}`,
        "--node-id=n1",
        `--data-dir=${join(dir, "data")}`,
        `--csi-socket=${root}/plugins/${DRIVER}/csi.sock`,
        `--registration-socket=${registration}`,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      for (let i = 0; i < 200; i++) {
        if (await Deno.lstat(registration).then(() => true, () => false)) {
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      const result = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          // the probe imports the CSI clients: the project's import map, no permissions
          "--config",
          join(ROOT, "deno.json"),
          ...flags,
          join(ROOT, "tests/ship/testdata/csi_probe.ts"),
          root,
          ungranted,
        ],
        cwd: dir,
        env: CHILD_ENV,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(result.stderr);
      assert.equal(result.code, 0, stderr);
      const out = JSON.parse(new TextDecoder().decode(result.stdout)) as {
        drivers: string[];
        entries: unknown[];
        denied: string;
      };
      assert.deepEqual(out.drivers, [DRIVER]);
      assert.deepEqual(out.entries, [{
        name: DRIVER,
        nodeID: "n1",
        topologyKeys: ["topology.hostpath.csi/node"],
      }]);
      assert.match(
        out.denied,
        /PermissionDenied desc = cannot use CSI plugin socket ".*other-reg\.sock".*--allow-net=unix:.*other-reg\.sock/,
      );
    } finally {
      plugin.kill("SIGTERM");
      await plugin.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
