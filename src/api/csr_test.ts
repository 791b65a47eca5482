import assert from "node:assert/strict";
import {
  csrObjectName,
  ecdsaSignatureToDer,
  generateNodeKey,
  importNodeKey,
  makeNodeCsr,
} from "./csr.ts";

// A fixed P-256 key (made for this test only). Go's x509.ParseCertificateRequest +
// CheckSignature accepted the request made from it, and upstream's digestedName
// computed in Go gave the name pinned below.
const KEY_PEM = "-----BEGIN PRIVATE KEY-----\n" +
  "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg/CIMUnK81jFioSWyZV36EWjeQRmIQ/k1wcLG42SRlLehRANCAASh117M7NsSb57iIEt6dU2u00TbI+L86MbUHfpk16Iw93olUj6f3NxZmjo7ZzexmfxA4Iv06tMx3fxX0dZeBV+J\n" +
  "-----END PRIVATE KEY-----\n";

/** A minimal DER reader for the test: [tag, content, total length] at `at`. */
function tlv(
  der: Uint8Array,
  at: number,
): { tag: number; start: number; end: number } {
  const tag = der[at]!;
  let len = der[at + 1]!;
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[start + i]!;
    start += n;
  }
  return { tag, start, end: start + len };
}

function children(der: Uint8Array, parent: { start: number; end: number }) {
  const out = [];
  for (let at = parent.start; at < parent.end;) {
    const t = tlv(der, at);
    out.push({ ...t, from: at });
    at = t.end;
  }
  return out;
}

function pemBody(pem: string): Uint8Array<ArrayBuffer> {
  const b64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function derToRaw(sig: Uint8Array): Uint8Array<ArrayBuffer> {
  const seq = tlv(sig, 0);
  const [r, s] = children(sig, seq);
  const fixed = (x: { start: number; end: number }) => {
    const bytes = sig.slice(x.start, x.end);
    const trimmed = bytes[0] === 0 ? bytes.slice(1) : bytes;
    const out = new Uint8Array(32);
    out.set(trimmed, 32 - trimmed.length);
    return out;
  };
  return Uint8Array.from([...fixed(r!), ...fixed(s!)]);
}

Deno.test("makeNodeCsr() builds a self-signed PKCS#10 request for system:node:<name>", async () => {
  const keys = await generateNodeKey();
  const csr = await makeNodeCsr("node-a", keys);
  assert.match(csr.csrPem, /^-----BEGIN CERTIFICATE REQUEST-----\n/);
  assert.match(csr.keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
  const der = pemBody(csr.csrPem);
  const outer = tlv(der, 0);
  const [info, alg, sig] = children(der, outer);
  assert.equal(info!.tag, 0x30);
  // signatureAlgorithm: ecdsa-with-SHA256, no parameters
  assert.deepEqual(
    [...der.slice(alg!.from, alg!.end)],
    [0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02],
  );
  const [version, subject, spki, attrs] = children(der, info!);
  assert.deepEqual([...der.slice(version!.from, version!.end)], [2, 1, 0]);
  const text = new TextDecoder().decode(
    der.slice(subject!.start, subject!.end),
  );
  assert.ok(text.indexOf("system:nodes") < text.indexOf("system:node:node-a"));
  assert.deepEqual(
    [...der.slice(spki!.from, spki!.end)],
    [...csr.publicKeyDer],
  );
  assert.deepEqual([...der.slice(attrs!.from, attrs!.end)], [0xa0, 0x00]);
  // The signature (BIT STRING, no unused bits) verifies over the info bytes.
  assert.equal(sig!.tag, 0x03);
  assert.equal(der[sig!.start], 0);
  const ok = await crypto.subtle.verify(
    { name: "ECDSA", hash: "SHA-256" },
    keys.publicKey,
    derToRaw(der.slice(sig!.start + 1, sig!.end)),
    new Uint8Array(der.slice(info!.from, info!.end)),
  );
  assert.ok(ok);
});

Deno.test("csrObjectName() matches upstream digestedName for a fixed key", async () => {
  const keys = await importNodeKey(KEY_PEM);
  const csr = await makeNodeCsr("node-a", keys);
  assert.equal(
    csrObjectName(csr.publicKeyDer, "node-a"),
    "node-csr-vrT-FsDZ1NCpwsUO3JHn_IVw0LxCHYN_iJukd-3UHLc",
  );
  assert.notEqual(
    csrObjectName(csr.publicKeyDer, "node-b"),
    csrObjectName(csr.publicKeyDer, "node-a"),
  );
});

Deno.test("importNodeKey() restores a stored key that still signs", async () => {
  const keys = await importNodeKey(KEY_PEM);
  const csr = await makeNodeCsr("node-a", keys);
  assert.equal(csr.keyPem.replace(/\s+/g, ""), KEY_PEM.replace(/\s+/g, ""));
});

Deno.test("ecdsaSignatureToDer() keeps integers positive and minimal", () => {
  const raw = new Uint8Array(64);
  raw[0] = 0x80; // r needs a leading zero
  raw[63] = 1; // s is 1
  const der = ecdsaSignatureToDer(raw);
  assert.equal(der[0], 0x30);
  assert.deepEqual([...der.slice(2, 5)], [0x02, 33, 0x00]);
  assert.deepEqual([...der.slice(-3)], [0x02, 1, 1]);
});
