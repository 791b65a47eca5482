import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import {
  certificateLifetime,
  ClientCertificateRotator,
  rotationDeadline,
} from "./cert_rotation.ts";
import { ApiStatusError } from "./errors.ts";
import { FakeApiServer } from "./testing.ts";

const FAKE_CERT =
  "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.ok(check(), "condition not reached");
}

Deno.test("rotationDeadline() falls between 70 % and 90 % of the lifetime", () => {
  const life = { notBefore: 1000, notAfter: 11_000 };
  assert.equal(rotationDeadline(life, () => 0), 8000);
  assert.equal(rotationDeadline(life, () => 0.5), 9000);
  assert.ok(rotationDeadline(life, () => 0.999999) < 10_000);
});

Deno.test("certificateLifetime() is undefined for text that is not a certificate", () => {
  assert.equal(certificateLifetime("nope"), undefined);
  assert.equal(certificateLifetime(FAKE_CERT), undefined);
});

Deno.test("ClientCertificateRotator.run() rotates at the deadline with the node's identity and hands the new pair over", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-rotate-" });
  const api = new FakeApiServer();
  const clock = new FakeClock();
  const handed: string[] = [];
  const stop = new AbortController();
  try {
    const rotator = new ClientCertificateRotator({
      clock,
      logger: new CaptureLogger(),
      api,
      onRotated: (pair) => {
        handed.push(pair);
      },
      random: () => 0,
      // Every certificate here lives 100 s from now.
      lifetime: () => ({
        notBefore: clock.now(),
        notAfter: clock.now() + 100_000,
      }),
    }, { nodeName: "node-a", certDir: dir, currentPairPem: "OLD" });
    const running = rotator.run(stop.signal);
    await clock.advance(69_999);
    assert.equal(api.csrs.size, 0);
    await clock.advance(1);
    await until(() => api.csrs.size === 1);
    const csr = [...api.csrs.values()][0]!;
    csr.status = {
      conditions: [{ type: "Approved", status: "True" }],
      certificate: btoa(FAKE_CERT),
    };
    await clock.advance(1000);
    await until(() => handed.length === 1);
    assert.match(handed[0]!, /BEGIN CERTIFICATE[\s\S]*BEGIN PRIVATE KEY/);
    assert.equal(rotator.currentPairPem, handed[0]);
    assert.equal(
      await Deno.readTextFile(`${dir}/kubelet-client-current.pem`),
      handed[0],
    );
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ClientCertificateRotator.run() retries a failed request after a back-off", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-rotate-" });
  const api = new FakeApiServer();
  const clock = new FakeClock();
  const stop = new AbortController();
  try {
    api.injectError("createCsr", new ApiStatusError("down", { code: 503 }));
    const rotator = new ClientCertificateRotator({
      clock,
      logger: new CaptureLogger(),
      api,
      onRotated: () => {},
      lifetime: () => undefined, // unreadable: rotate now
    }, { nodeName: "node-a", certDir: dir, currentPairPem: "OLD" });
    const running = rotator.run(stop.signal);
    await until(() => api.calls.length === 1);
    assert.equal(api.csrs.size, 0);
    await clock.advance(1000);
    await until(() => api.csrs.size === 1);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
});
