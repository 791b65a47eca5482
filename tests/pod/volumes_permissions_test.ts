/**
 * Volumes under path-scoped Deno grants, the way the compiled kubelet runs (only the root dir
 * readable and writable): emptyDir, subPath, a typed hostPath inside the grants and downwardAPI
 * files (in the `files` layout, as `Deno.symlink` needs unscoped grants) all work; a typed
 * hostPath and a local PV outside them fail to mount with a message naming the path and the
 * lists' option that grants it.
 */
import assert from "node:assert/strict";

const SCRIPT =
  new URL("./testdata/volumes_scoped.ts", import.meta.url).pathname;

Deno.test("volumes work under path-scoped grants; a hostPath outside them fails with FailedMount", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--no-check",
        `--allow-read=${root}`,
        `--allow-write=${root}`,
        SCRIPT,
        root,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.deepEqual(result.first, { ok: true });
    assert.deepEqual(result.second, { ok: true });
    assert.equal(result.labels, 'v="2"');
    const data = `${root}/pods/u1/volumes/kubernetes.io~empty-dir/data`;
    assert.deepEqual(
      result.mounts.map((m: { hostPath: string }) => m.hostPath),
      [
        `${data}/a/b`,
        `${root}/pods/u1/volumes/kubernetes.io~downward-api/info`,
        `${root}/host/made`,
      ],
    );
    assert.equal(result.outside.reason, "FailedMount");
    // the message names the path and the fix: the lists' --host-path
    assert.match(
      result.outside.message,
      /^MountVolume\.SetUp failed for volume "etc" : the kubelet's permission lists do not grant access to \/etc\/kts-h4-nope: build them with --host-path=/,
    );
    assert.match(
      result.subPathOutside,
      /the kubelet's permission lists do not grant access to \/etc\/kts-sub-nope: build them with --host-path=/,
    );
    assert.equal(result.localPv.ok, false);
    assert.match(
      result.localPv.message,
      /^MountVolume\.SetUp failed for volume "pv1" : the kubelet's permission lists do not grant access to \/etc\/kts-local-pv: build them with --host-path=/,
    );
    assert.ok(
      result.warnings.some((w: string) => w.includes("written file by file")),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
