// The bundled dev OpenID provider's port (README "Configuration", VESTIBULE_DEV_IDP_PORT): 5556 by
// default and any free port when that one is busy; a port the developer names is used exactly, and
// a busy one stops `npm run dev` rather than moving the issuer somewhere they did not register.
import { createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEV_IDP_PORT, devIdpPort, startDevIdp, type RunningIdp } from "../../../app/dev/idp.server";

const held: { close(): unknown }[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((h) => h.close()));
});

/** A port some other program holds for the length of the test. */
async function busyPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  held.push({ close: () => new Promise((resolve) => server.close(resolve)) });
  return (server.address() as AddressInfo).port;
}

describe("VESTIBULE_DEV_IDP_PORT", () => {
  it("unset or empty: 5556, falling back to a free port; set: exactly that port", () => {
    expect(devIdpPort(undefined)).toEqual({ port: DEV_IDP_PORT, strictPort: false });
    expect(devIdpPort("")).toEqual({ port: 5556, strictPort: false });
    expect(devIdpPort("7001")).toEqual({ port: 7001, strictPort: true });
  });

  it("a value that is no port stops the start naming the variable", () => {
    for (const bad of ["abc", "0", "65536", "80.5", "-1", "1e3"]) expect(() => devIdpPort(bad), bad).toThrow(/VESTIBULE_DEV_IDP_PORT must be a port number/);
  });

  it("a developer who names a busy port gets an error; the default's busy port moves to a free one", async () => {
    const port = await busyPort();
    await expect(startDevIdp({ port, strictPort: true })).rejects.toThrow(/EADDRINUSE/);
    const idp: RunningIdp = await startDevIdp({ port, strictPort: false });
    held.push({ close: () => idp.stop() });
    expect(idp.port).not.toBe(port);
    expect(idp.issuer).toBe(`http://localhost:${idp.port}`);
  });
});
