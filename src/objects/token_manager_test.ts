import assert from "node:assert/strict";
import type { TokenRequest } from "../api/mod.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { FakeObjectApi } from "./testing.ts";
import { createTokenManager, requiresRefresh } from "./token_manager.ts";

const HOUR = 3600_000;

function request(uid: string, seconds = 3600): TokenRequest {
  return {
    spec: {
      audiences: ["api"],
      expirationSeconds: seconds,
      boundObjectRef: { apiVersion: "v1", kind: "Pod", name: "p", uid },
    },
  };
}

Deno.test("requiresRefresh: after 80 % of the lifetime or 24 h, jitter moving it earlier", () => {
  const exp = Date.UTC(2026, 0, 1, 1);
  const tr: TokenRequest = {
    ...request("u"),
    status: { token: "t", expirationTimestamp: new Date(exp).toISOString() },
  };
  const issued = exp - HOUR;
  assert.equal(requiresRefresh(tr, issued + 0.79 * HOUR, 0), false);
  assert.equal(requiresRefresh(tr, issued + 0.81 * HOUR, 0), true);
  assert.equal(
    requiresRefresh(tr, issued + 0.8 * HOUR - 5_000, 9_000),
    true,
  );
  const year = 365 * 24 * 3600;
  const long: TokenRequest = {
    ...request("u", year),
    status: {
      token: "t",
      expirationTimestamp: new Date(issued + year * 1000).toISOString(),
    },
  };
  assert.equal(requiresRefresh(long, issued + 23 * HOUR, 0), false);
  assert.equal(requiresRefresh(long, issued + 24 * HOUR + 1, 0), true);
});

Deno.test("tokens are cached per request, refreshed at 80 %, kept when a refresh fails until they expire", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = new FakeObjectApi();
  api.now = () => clock.now();
  const logger = new CaptureLogger();
  const tokens = createTokenManager({ api, clock, logger, random: () => 0 });
  const get = () =>
    tokens.getServiceAccountToken("ns", "sa", request("u1"))
      .then((t) => t.status?.token);
  assert.equal(await get(), "token-ns-sa-1");
  assert.equal(await get(), "token-ns-sa-1");
  assert.equal(
    (await tokens.getServiceAccountToken("ns", "sa", request("u2"))).status
      ?.token,
    "token-ns-sa-2",
  );
  await clock.advance(0.81 * HOUR);
  assert.equal(await get(), "token-ns-sa-3");

  await clock.advance(0.81 * HOUR);
  const failing = createTokenManager({ api, clock, logger, random: () => 0 });
  api.forbidden.add("serviceaccounts/ns/sa");
  await assert.rejects(
    () => failing.getServiceAccountToken("ns", "sa", request("u1")),
    /^Error: failed to fetch token: serviceaccounts\/ns\/sa is forbidden$/,
  );
  // the cached token is still valid: served, the failure logged
  assert.equal(await get(), "token-ns-sa-3");
  assert.ok(logger.records.some((r) => r.msg === "Couldn't update token"));
  await clock.advance(0.2 * HOUR);
  // expired: never served again (dropped by the minute's clean-up, else refused)
  await assert.rejects(get, /failed to fetch token|expired and refresh failed/);
  assert.equal(api.calls.filter((c) => c.method === "token").length, 6);
});

Deno.test("deletePodTokens and cleanup forget tokens", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = new FakeObjectApi();
  api.now = () => clock.now();
  const tokens = createTokenManager({
    api,
    clock,
    logger: new CaptureLogger(),
    random: () => 0,
  });
  await tokens.getServiceAccountToken("ns", "sa", request("u1"));
  tokens.deletePodTokens("u1");
  await tokens.getServiceAccountToken("ns", "sa", request("u1"));
  assert.equal(api.calls.length, 2);
  await clock.advance(HOUR + 1);
  tokens.cleanup();
  await tokens.getServiceAccountToken("ns", "sa", request("u1"));
  assert.equal(api.calls.length, 3);
});
