/**
 * The sandbox host name on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh): `setHostnameAsFQDN` makes `hostname` print the FQDN; one over 64
 * bytes fails sandbox creation. Skipped without the endpoint.
 */
import assert from "node:assert/strict";
import { endpoint, shContainer, startE2e, waitFor } from "./_containerd_e2e.ts";

Deno.test({
  name:
    "containerd: setHostnameAsFQDN gives the container its FQDN; a too-long FQDN gets no sandbox",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({
      environment: {
        resolvConf: "/etc/resolv.conf",
        clusterDomain: "cluster.local",
      },
    });
    const spec = (hostname: string, fqdn: boolean) => ({
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 1,
      hostname,
      subdomain: "sub",
      setHostnameAsFQDN: fqdn,
      containers: [shContainer("c", "hostname")],
    });
    await e.write("fqdn.yaml", {
      metadata: { name: "fqdn" },
      spec: spec("h", true),
    });
    await e.write("short.yaml", {
      metadata: { name: "short" },
      spec: spec("h", false),
    });
    await e.write("long.yaml", {
      metadata: { name: "long" },
      spec: spec("l".repeat(40), true),
    });
    const output = async (pod: string) => {
      await waitFor(
        `${pod} exited`,
        () => e.statuses(pod).at(-1)?.containerStatuses?.[0]?.state.terminated,
      );
      for await (const d of Deno.readDir(e.logsDir)) {
        if (!d.name.startsWith(`default_${pod}-${e.node}_`)) continue;
        const raw = await Deno.readTextFile(`${e.logsDir}/${d.name}/c/0.log`);
        return raw.trim().split(" ").slice(3).join(" ");
      }
      throw new Error(`no log of ${pod}`);
    };
    assert.equal(await output("fqdn"), "h.sub.default.svc.cluster.local");
    assert.equal(await output("short"), "h");
    await waitFor(
      "the long FQDN's sandbox failure logged",
      () =>
        e.logger.records.some((r) =>
          JSON.stringify(r).includes("is too long (64 characters is the max")
        ) || undefined,
    );
    assert.deepEqual(await e.sandboxes("long"), []);
  },
});
