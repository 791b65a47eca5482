/**
 * The chain rules of `verifyClientCertificate` beyond trust and validity: only v3 leaves that
 * are not CAs, Go's extended key usage nesting over the whole chain, CA intermediates and
 * `pathLenConstraint`; and one warning per certificate refused where upstream accepts it.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { EKU, makeCertificate, type TestPair } from "../testing.ts";
import { createAuthenticator } from "./authenticate.ts";
import {
  CertificateError,
  certificateFacts,
  parseCertificateBundle,
  verifyClientCertificate,
} from "./x509.ts";

const der = (pair: TestPair) =>
  new Uint8Array(new X509Certificate(pair.certPem).raw);

const CA = makeCertificate({ commonName: "ca", ca: true, extKeyUsages: [] });
const CA_PATH_0 = makeCertificate({
  commonName: "ca-pathlen-0",
  ca: true,
  pathLen: 0,
  extKeyUsages: [],
});
const CA_SERVER_ONLY = makeCertificate({
  commonName: "ca-server-only",
  ca: true,
  extKeyUsages: [EKU.serverAuth],
});
const ROOTS = parseCertificateBundle(
  CA.certPem + CA_PATH_0.certPem + CA_SERVER_ONLY.certPem,
);

const verify = (...chain: TestPair[]) =>
  verifyClientCertificate(chain.map(der), { roots: ROOTS, nowMs: Date.now() });

function refuses(chain: TestPair[], pattern: RegExp): void {
  assert.throws(
    () => verify(...chain),
    (e: unknown) => e instanceof CertificateError && pattern.test(e.message),
    pattern.source,
  );
}

const intermediate = (
  issuer: TestPair,
  more: Partial<Parameters<typeof makeCertificate>[0]> = {},
) =>
  makeCertificate({
    commonName: "intermediate",
    ca: true,
    extKeyUsages: [],
    issuer,
    ...more,
  });
const leafOf = (issuer: TestPair) =>
  makeCertificate({ commonName: "alice", issuer });

Deno.test("certificateFacts() reads the version, basic constraints and usages", () => {
  assert.deepEqual(
    certificateFacts(der(CA_PATH_0)),
    { version: 3, ca: true, pathLen: 0, usages: undefined },
  );
  assert.deepEqual(
    certificateFacts(der(makeCertificate({ commonName: "a", version: 1 }))),
    { version: 1, ca: false, pathLen: undefined, usages: undefined },
  );
  assert.equal(
    certificateFacts(der(makeCertificate({ commonName: "b", version: 2 })))
      .version,
    2,
  );
});

Deno.test("verifyClientCertificate() accepts only v3 leaves that are not CAs", () => {
  assert.equal(verify(leafOf(CA)).name, "alice");
  for (const version of [1, 2] as const) {
    refuses(
      [makeCertificate({ commonName: "old", issuer: CA, version })],
      new RegExp(`version ${version}: only version 3`),
    );
  }
  refuses(
    [makeCertificate({ commonName: "ca-leaf", issuer: CA, ca: true })],
    /is a CA certificate/,
  );
});

Deno.test("verifyClientCertificate() applies Go's usage nesting, CA and pathLen rules to the chain", () => {
  const plain = intermediate(CA);
  assert.equal(verify(leafOf(plain), plain).name, "alice");
  const anyUsage = intermediate(CA, { extKeyUsages: ["2.5.29.37.0"] });
  assert.equal(verify(leafOf(anyUsage), anyUsage).name, "alice");
  const client = intermediate(CA, { extKeyUsages: [EKU.clientAuth] });
  assert.equal(verify(leafOf(client), client).name, "alice");
  const server = intermediate(CA, { extKeyUsages: [EKU.serverAuth] });
  refuses([leafOf(server), server], /on the chain specifies an incompatible/);
  // The root's own usages count too.
  refuses([leafOf(CA_SERVER_ONLY)], /on the chain specifies an incompatible/);
  // pathLen 0: a leaf right below is fine, one intermediate is one too many.
  assert.equal(verify(leafOf(CA_PATH_0)).name, "alice");
  const below = intermediate(CA_PATH_0);
  refuses([leafOf(below), below], /allows 0 intermediate certificate\(s\)/);
  // An intermediate's own pathLen counts the intermediates under it.
  const top = intermediate(CA, { pathLen: 0, commonName: "top" });
  const middle = intermediate(top, { commonName: "middle" });
  refuses([leafOf(middle), middle, top], /"CN=top" allows 0/);
  const roomy = intermediate(CA, { pathLen: 1, commonName: "roomy" });
  const under = intermediate(roomy, { commonName: "under" });
  assert.equal(verify(leafOf(under), under, roomy).name, "alice");
  // An intermediate that is no CA signs nothing.
  const notCa = makeCertificate({
    commonName: "not-ca",
    issuer: CA,
    extKeyUsages: [],
  });
  refuses([leafOf(notCa), notCa], /unknown authority/);
});

Deno.test("createAuthenticator() warns once per certificate refused where upstream accepts it", async () => {
  const logger = new CaptureLogger();
  const authn = createAuthenticator({
    clock: new FakeClock(Date.now()),
    logger,
  }, {
    clientCAs: () => ROOTS,
    anonymous: false,
  });
  const v1 = der(makeCertificate({ commonName: "v1", issuer: CA, version: 1 }));
  const expired = der(makeCertificate({
    commonName: "expired",
    issuer: CA,
    notBefore: Date.now() - 2 * 86_400_000,
    notAfter: Date.now() - 86_400_000,
  }));
  for (let i = 0; i < 3; i++) {
    for (const cert of [v1, expired]) {
      const result = await authn({
        peerCertificates: [cert],
        authorization: null,
      });
      assert.equal(result.user, undefined);
    }
  }
  const warnings = logger.records.filter((e) =>
    e.msg === "Refusing a client certificate"
  );
  assert.equal(warnings.length, 1, JSON.stringify(logger.records));
  assert.match(String(warnings[0]!.fields.err), /"CN=v1" is X\.509 version 1/);
});
