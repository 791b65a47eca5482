import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import {
  bootstrapClientCertificate,
  certificateValidAt,
  CLIENT_PAIR_CURRENT,
} from "./bootstrap.ts";
import { KUBELET_CLIENT_SIGNER } from "./csr.ts";
import { loadKubeconfig } from "./kubeconfig.ts";
import { FakeApiServer } from "./testing.ts";
import type { CertificateSigningRequest, CsrApi, WatchEvent } from "./types.ts";

const BOOTSTRAP = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: { server: "https://127.0.0.1:6443", certificate-authority-data: ${
  btoa("CA-PEM\n")
} }
users:
- name: u
  user: { token: abcdef.0123456789abcdef }
contexts:
- name: x
  context: { cluster: c, user: u }
current-context: x
`;

const FAKE_CERT =
  "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.ok(check(), "condition not reached");
}

Deno.test("bootstrapClientCertificate() requests, waits for issuance, stores the pair and writes the kubeconfig", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-bootstrap-" });
  try {
    await Deno.writeTextFile(`${dir}/bootstrap.conf`, BOOTSTRAP);
    const api = new FakeApiServer();
    const clock = new FakeClock();
    const done = bootstrapClientCertificate({
      clock,
      logger: new CaptureLogger(),
      csrApiFor: (conn) => {
        assert.equal(conn.token, "abcdef.0123456789abcdef");
        return api;
      },
    }, {
      nodeName: "node-a",
      kubeconfigPath: `${dir}/kubelet.conf`,
      bootstrapKubeconfigPath: `${dir}/bootstrap.conf`,
      certDir: `${dir}/pki`,
    });
    await until(() => api.csrs.size === 1);
    const [name, csr] = [...api.csrs.entries()][0]!;
    assert.match(name, /^node-csr-[A-Za-z0-9_-]{43}$/);
    assert.equal(csr.spec.signerName, KUBELET_CLIENT_SIGNER);
    assert.deepEqual(csr.spec.usages, ["digital signature", "client auth"]);
    assert.match(atob(csr.spec.request), /BEGIN CERTIFICATE REQUEST/);
    // Not approved yet: it keeps polling.
    await clock.advance(3000);
    csr.status = {
      conditions: [{ type: "Approved", status: "True" }],
      certificate: btoa(FAKE_CERT),
    };
    await clock.advance(1000);
    assert.equal(await done, true);

    const pair = await Deno.readTextFile(`${dir}/pki/${CLIENT_PAIR_CURRENT}`);
    assert.match(pair, /BEGIN CERTIFICATE[\s\S]*BEGIN PRIVATE KEY/);
    // The dated pair and the current name (a link to it: the tests hold unscoped grants),
    // 0600, and no temporary file left.
    const names = [];
    for await (const e of Deno.readDir(`${dir}/pki`)) names.push(e.name);
    const dated = names.filter((n) =>
      /^kubelet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/.test(n)
    );
    assert.deepEqual(names.sort(), [...dated, CLIENT_PAIR_CURRENT].sort());
    assert.equal(dated.length, 1);
    assert.equal(await Deno.readTextFile(`${dir}/pki/${dated[0]}`), pair);
    for (const n of names) {
      assert.equal((await Deno.stat(`${dir}/pki/${n}`)).mode! & 0o777, 0o600);
    }
    const conn = await loadKubeconfig(`${dir}/kubelet.conf`);
    assert.equal(conn.server, "https://127.0.0.1:6443");
    assert.equal(conn.caPem, "CA-PEM\n");
    assert.equal(conn.certPem, pair);
    assert.equal(conn.keyPem, pair);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bootstrapClientCertificate() keeps a kubeconfig that already has credentials", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-bootstrap-" });
  try {
    await Deno.writeTextFile(`${dir}/kubelet.conf`, BOOTSTRAP);
    const api = new FakeApiServer();
    const got = await bootstrapClientCertificate({
      clock: new FakeClock(),
      logger: new CaptureLogger(),
      csrApiFor: () => api,
    }, {
      nodeName: "node-a",
      kubeconfigPath: `${dir}/kubelet.conf`,
      bootstrapKubeconfigPath: `${dir}/missing.conf`,
      certDir: `${dir}/pki`,
    });
    assert.equal(got, false);
    assert.equal(api.calls.length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bootstrapClientCertificate() fails when the request is denied", async () => {
  const api = new FakeApiServer();
  const clock = new FakeClock();
  const { done, stop } = await bootstrapWith(api, clock);
  try {
    await until(() => api.csrs.size === 1);
    [...api.csrs.values()][0]!.status = {
      conditions: [{ type: "Denied", status: "True" }],
    };
    const outcome = done.then(() => undefined, (e: Error) => e);
    await clock.advance(1000);
    assert.match(String(await outcome), /denied/);
  } finally {
    await stop();
  }
});

Deno.test("certificateValidAt() is false for text that is not a certificate", () => {
  assert.equal(certificateValidAt("nope", Date.now()), false);
  assert.equal(certificateValidAt(FAKE_CERT, Date.now()), false);
});

/** The fake server's requests with a watch the test feeds by hand. */
class WatchedCsrs {
  readonly server = new FakeApiServer();
  watches = 0;
  #feed: Array<(event: WatchEvent<CertificateSigningRequest>) => void> = [];
  refuse = false;

  createCsr(csr: CertificateSigningRequest) {
    return this.server.createCsr(csr);
  }
  getCsr(name: string) {
    return this.server.getCsr(name);
  }
  async *watchCsr(
    _name: string,
    _resourceVersion: string,
    _options: { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<CertificateSigningRequest>> {
    this.watches++;
    if (this.refuse) {
      // a macrotask first, so that a caller retrying at once is seen, not a frozen test
      await new Promise((r) => setTimeout(r, 1));
      throw new Error("forbidden");
    }
    for (;;) {
      yield await new Promise<WatchEvent<CertificateSigningRequest>>((
        resolve,
      ) => this.#feed.push(resolve));
    }
  }
  /** Hands `event` (a copy) to the watch once it waits for one. */
  async send(event: WatchEvent<CertificateSigningRequest>): Promise<void> {
    await until(() => this.#feed.length > 0);
    for (const resolve of this.#feed.splice(0)) {
      resolve(structuredClone(event));
    }
  }
}

/** Starts a bootstrap against `api`; `stop()` aborts it and removes its directory. */
async function bootstrapWith(api: CsrApi, clock: FakeClock) {
  const dir = await Deno.makeTempDir({ prefix: "kts-bootstrap-" });
  const abort = new AbortController();
  await Deno.writeTextFile(`${dir}/bootstrap.conf`, BOOTSTRAP);
  const done = bootstrapClientCertificate({
    clock,
    logger: new CaptureLogger(),
    csrApiFor: () => api,
  }, {
    nodeName: "node-a",
    kubeconfigPath: `${dir}/kubelet.conf`,
    bootstrapKubeconfigPath: `${dir}/bootstrap.conf`,
    certDir: `${dir}/pki`,
    signal: abort.signal,
  });
  const stop = async () => {
    abort.abort();
    await done.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  };
  return { dir, done, stop };
}

Deno.test("bootstrapClientCertificate() takes the certificate from the watch at once, without waiting for a poll", async () => {
  const api = new WatchedCsrs();
  const clock = new FakeClock();
  const { dir, done, stop } = await bootstrapWith(api, clock);
  try {
    await until(() => api.watches === 1);
    const csr = structuredClone([...api.server.csrs.values()][0]!);
    await api.send({ type: "MODIFIED", object: csr });
    await api.send({ type: "BOOKMARK", object: csr });
    csr.status = {
      conditions: [{ type: "Approved", status: "True" }],
      certificate: btoa(FAKE_CERT),
    };
    await api.send({ type: "MODIFIED", object: csr });
    // the fake clock never moves: only the watch can end the wait
    let finished = false;
    void done.then(() => finished = true, () => finished = true);
    await until(() => finished);
    assert.equal(await done, true);
    assert.match(
      await Deno.readTextFile(`${dir}/pki/${CLIENT_PAIR_CURRENT}`),
      /MIIB/,
    );
  } finally {
    await stop();
  }
});

Deno.test("bootstrapClientCertificate() fails at once when the watch shows the request denied or deleted", async () => {
  for (const type of ["Denied", "DELETED"] as const) {
    const api = new WatchedCsrs();
    const { done, stop } = await bootstrapWith(api, new FakeClock());
    try {
      await until(() => api.watches === 1);
      const csr = structuredClone([...api.server.csrs.values()][0]!);
      const outcome = done.then(() => undefined, (e: Error) => e);
      if (type === "DELETED") await api.send({ type: "DELETED", object: csr });
      else {
        csr.status = { conditions: [{ type: "Denied", status: "True" }] };
        await api.send({ type: "MODIFIED", object: csr });
      }
      assert.match(
        String(await outcome),
        type === "DELETED" ? /was deleted/ : /denied/,
      );
    } finally {
      await stop();
    }
  }
});

Deno.test("bootstrapClientCertificate() polls, without spinning, when the watch is refused", async () => {
  const api = new WatchedCsrs();
  api.refuse = true;
  const clock = new FakeClock();
  const { done, stop } = await bootstrapWith(api, clock);
  try {
    await until(() => api.watches === 1);
    await new Promise((r) => setTimeout(r, 50));
    // one read and one refused watch, then it waits for the poll interval
    assert.equal(api.watches, 1);
    assert.equal(
      api.server.calls.filter((c) => c.method === "getCsr").length,
      1,
    );
    [...api.server.csrs.values()][0]!.status = {
      conditions: [{ type: "Approved", status: "True" }],
      certificate: btoa(FAKE_CERT),
    };
    await clock.advance(1000);
    assert.equal(await done, true);
  } finally {
    await stop();
  }
});
