import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { FakeClock } from "../../clock/testing.ts";
import { EKU, makeCertificate, type TestPair } from "../testing.ts";
import {
  ANONYMOUS_USER,
  bearerToken,
  createAuthenticator,
  type UserInfo,
} from "./authenticate.ts";
import { createWebhookTokenAuthenticator } from "./token_webhook.ts";
import {
  CertificateError,
  parseCertificateBundle,
  verifyClientCertificate,
} from "./x509.ts";

function der(pair: TestPair): Uint8Array {
  return new Uint8Array(new X509Certificate(pair.certPem).raw);
}

const CA = makeCertificate({
  commonName: "test-ca",
  ca: true,
  extKeyUsages: [],
});
const OTHER_CA = makeCertificate({
  commonName: "other-ca",
  ca: true,
  extKeyUsages: [],
});
const ROOTS = parseCertificateBundle(CA.certPem);

function verify(chain: TestPair[], nowMs = Date.now()) {
  return verifyClientCertificate(chain.map(der), { roots: ROOTS, nowMs });
}

function rejects(chain: TestPair[], pattern: RegExp, nowMs?: number): void {
  assert.throws(
    () => verify(chain, nowMs),
    (e: unknown) => e instanceof CertificateError && pattern.test(e.message),
  );
}

Deno.test("verifyClientCertificate() names the user by CN and the groups by O", () => {
  const client = makeCertificate({
    commonName: "alice",
    organizations: ["system:masters", "team-b"],
    issuer: CA,
  });
  assert.deepEqual(verify([client]), {
    name: "alice",
    groups: ["system:masters", "team-b"],
  });
  // No extended key usage at all is allowed, and so is "any".
  const plain = makeCertificate({
    commonName: "bob",
    issuer: CA,
    extKeyUsages: [],
  });
  assert.equal(verify([plain]).name, "bob");
  const any = makeCertificate({
    commonName: "carol",
    issuer: CA,
    extKeyUsages: ["2.5.29.37.0"],
  });
  assert.equal(verify([any]).name, "carol");
});

Deno.test("verifyClientCertificate() follows an intermediate the client presents", () => {
  const intermediate = makeCertificate({
    commonName: "intermediate",
    issuer: CA,
    ca: true,
    extKeyUsages: [],
  });
  const client = makeCertificate({ commonName: "dave", issuer: intermediate });
  assert.equal(verify([client, intermediate]).name, "dave");
  rejects([client], /unknown authority/);
  // A non-CA certificate cannot act as an intermediate.
  const leafIssuer = makeCertificate({ commonName: "leaf", issuer: CA });
  const forged = makeCertificate({ commonName: "eve", issuer: leafIssuer });
  rejects([forged, leafIssuer], /unknown authority/);
});

Deno.test("verifyClientCertificate() refuses untrusted, expired, early, wrong-usage and nameless certificates", () => {
  const now = Date.now();
  rejects(
    [makeCertificate({ commonName: "mallory", issuer: OTHER_CA })],
    /unknown authority/,
  );
  rejects([makeCertificate({ commonName: "self" })], /unknown authority/);
  rejects(
    [makeCertificate({
      commonName: "old",
      issuer: CA,
      notBefore: now - 10 * 86_400_000,
      notAfter: now - 86_400_000,
    })],
    /has expired/,
  );
  rejects(
    [makeCertificate({
      commonName: "future",
      issuer: CA,
      notBefore: now + 86_400_000,
      notAfter: now + 10 * 86_400_000,
    })],
    /not yet valid/,
  );
  rejects(
    [makeCertificate({
      commonName: "server",
      issuer: CA,
      extKeyUsages: [EKU.serverAuth],
    })],
    /incompatible key usage/,
  );
  rejects(
    [makeCertificate({ commonName: "", issuer: CA })],
    /empty common name/,
  );
  // Validity is judged on the injected clock, not the TLS layer's.
  const client = makeCertificate({ commonName: "alice", issuer: CA });
  rejects([client], /has expired/, now + 2 * 86_400_000);
  assert.throws(() =>
    verifyClientCertificate([new Uint8Array([1, 2, 3])], {
      roots: ROOTS,
      nowMs: now,
    })
  );
  rejects([], /no client certificate/);
});

Deno.test("bearerToken() reads the second word of a Bearer header", () => {
  assert.equal(bearerToken("Bearer abc"), "abc");
  assert.equal(bearerToken("bearer abc"), "abc");
  assert.equal(bearerToken("Bearer abc extra"), "abc");
  assert.equal(bearerToken("Basic abc"), undefined);
  assert.equal(bearerToken("Bearer "), undefined);
  assert.equal(bearerToken("Bearer"), undefined);
  assert.equal(bearerToken(null), undefined);
});

class FakeTokens {
  calls = 0;
  constructor(readonly users: Record<string, UserInfo>) {}
  reviewToken(token: string) {
    this.calls++;
    const user = this.users[token];
    return Promise.resolve(
      user
        ? {
          authenticated: true,
          user: { username: user.name, groups: user.groups },
        }
        : { authenticated: false },
    );
  }
}

Deno.test("createAuthenticator() tries the certificate, then the token, then anonymous", async () => {
  const clock = new FakeClock(Date.now());
  const reviewer = new FakeTokens({
    good: { name: "tok-user", groups: ["g"] },
  });
  const tokens = createWebhookTokenAuthenticator({ reviewer, clock }, {
    ttlMs: 60_000,
  });
  const client = der(makeCertificate({ commonName: "alice", issuer: CA }));
  const untrusted = der(makeCertificate({ commonName: "m", issuer: OTHER_CA }));
  const authn = (anonymous: boolean) =>
    createAuthenticator({ clock, tokens }, {
      clientCAs: () => ROOTS,
      anonymous,
    });
  const on = authn(true);
  const off = authn(false);
  const ask = (
    a: typeof on,
    certs: Uint8Array[],
    authorization: string | null,
  ) => a({ peerCertificates: certs, authorization });
  assert.deepEqual((await ask(off, [client], null)).user, {
    name: "alice",
    groups: ["system:authenticated"],
  });
  assert.deepEqual((await ask(off, [], "Bearer good")).user, {
    name: "tok-user",
    groups: ["g", "system:authenticated"],
  });
  // A bad certificate falls through to a good token.
  assert.equal(
    (await ask(off, [untrusted], "Bearer good")).user?.name,
    "tok-user",
  );
  assert.deepEqual((await ask(on, [], null)).user, ANONYMOUS_USER);
  assert.equal((await ask(off, [], null)).user, undefined);
  // Presented but rejected credentials are never anonymous.
  assert.match(
    String((await ask(on, [untrusted], null) as { reason: string }).reason),
    /x509/,
  );
  assert.equal((await ask(on, [], "Bearer bad")).user, undefined);
  // Other schemes are no credentials.
  assert.deepEqual((await ask(on, [], "Basic eA==")).user, ANONYMOUS_USER);
});

Deno.test("createAuthenticator() ignores tokens without the webhook and certificates without a CA", async () => {
  const clock = new FakeClock(Date.now());
  const client = der(makeCertificate({ commonName: "alice", issuer: CA }));
  const authn = createAuthenticator({ clock }, { anonymous: false });
  assert.equal(
    (await authn({ peerCertificates: [client], authorization: "Bearer x" }))
      .user,
    undefined,
  );
});

Deno.test("createWebhookTokenAuthenticator() caches both answers for the TTL", async () => {
  const clock = new FakeClock(Date.now());
  const reviewer = new FakeTokens({ good: { name: "u", groups: [] } });
  const tokens = createWebhookTokenAuthenticator({ reviewer, clock }, {
    ttlMs: 120_000,
  });
  assert.equal((await tokens.authenticateToken("good"))?.name, "u");
  assert.equal(await tokens.authenticateToken("bad"), undefined);
  assert.equal((await tokens.authenticateToken("good"))?.name, "u");
  assert.equal(await tokens.authenticateToken("bad"), undefined);
  assert.equal(reviewer.calls, 2);
  await clock.advance(120_001);
  await tokens.authenticateToken("good");
  assert.equal(reviewer.calls, 3);
});

Deno.test("verifyClientCertificate() remembers a verified chain but still judges its validity on every call", () => {
  const now = Date.now();
  const client = makeCertificate({
    commonName: "carol",
    organizations: ["team"],
    issuer: CA,
  });
  assert.deepEqual(verify([client], now), { name: "carol", groups: ["team"] });
  // the second answer comes from the cache, and changing it does not change the cache
  const again = verify([client], now);
  assert.deepEqual(again, { name: "carol", groups: ["team"] });
  again.groups.push("x");
  assert.deepEqual(verify([client], now).groups, ["team"]);
  rejects([client], /has expired/, now + 2 * 86_400_000);
  rejects([client], /not yet valid/, now - 2 * 86_400_000);
  // another root set does not share the first one's answers
  assert.throws(
    () =>
      verifyClientCertificate([der(client)], {
        roots: [new X509Certificate(OTHER_CA.certPem)],
        nowMs: now,
      }),
    /unknown authority/,
  );
});
