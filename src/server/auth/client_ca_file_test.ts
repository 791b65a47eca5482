import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { makeCertificate } from "../testing.ts";
import { CA_RECHECK_MS, followClientCaFile } from "./client_ca_file.ts";

const A = makeCertificate({ commonName: "ca-a", ca: true, extKeyUsages: [] });
const B = makeCertificate({ commonName: "ca-b", ca: true, extKeyUsages: [] });

const subjects = (source: { current(): readonly { subject: string }[] }) =>
  source.current().map((c) => c.subject);

Deno.test("followClientCaFile() picks up a changed bundle by the minute recheck and keeps the last good one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-client-ca-" });
  const path = `${dir}/ca.crt`;
  const clock = new FakeClock();
  const logger = new CaptureLogger();
  try {
    await Deno.writeTextFile(path, A.certPem);
    const source = await followClientCaFile({ clock, logger }, path);
    try {
      assert.deepEqual(subjects(source), ["CN=ca-a"]);
      // Replaced by rename, which no file watch sees: the recheck must.
      await Deno.writeTextFile(`${dir}/new`, A.certPem + B.certPem);
      await Deno.rename(`${dir}/new`, path);
      await clock.advance(CA_RECHECK_MS);
      await waitFor(() => subjects(source).length === 2);
      assert.deepEqual(subjects(source), ["CN=ca-a", "CN=ca-b"]);
      // Garbage and an empty file keep the bundle in use, with an error logged.
      for (const text of ["not a certificate", ""]) {
        await Deno.writeTextFile(`${dir}/new`, text);
        await Deno.rename(`${dir}/new`, path);
        await clock.advance(CA_RECHECK_MS);
        await waitFor(() =>
          logger.records.filter((r) => r.severity === "error").length >=
            (text ? 1 : 2)
        );
        assert.deepEqual(subjects(source), ["CN=ca-a", "CN=ca-b"]);
      }
    } finally {
      source.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("followClientCaFile() names the file when it is unusable at start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-client-ca-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.crt`, "junk");
    await assert.rejects(
      followClientCaFile(
        { clock: new FakeClock(), logger: new CaptureLogger() },
        `${dir}/ca.crt`,
      ),
      /Invalid client CA file ".*ca\.crt" \(authentication\.x509\.clientCAFile, --client-ca-file\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Lets the reload's file reads finish (they are real I/O, not on the fake clock). */
async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(done(), "the condition never held");
}
