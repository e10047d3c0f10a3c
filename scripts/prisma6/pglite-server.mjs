// PostgreSQL for scripts/prisma-diff.sh with no server running: PGlite (PostgreSQL compiled to
// WebAssembly, in memory, in this process) behind a PostgreSQL wire-protocol socket on a free
// loopback port. Prisma's schema engine asks its PostgreSQL connection a few questions even for
// a schema-to-schema diff; this answers them as a server would, and nothing is stored. Prints the
// connection URL on its first line, then runs until its parent ends it.
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

const db = await PGlite.create();
const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 10 });
await server.start();
process.stdout.write(`postgresql://postgres@${server.getServerConn()}/postgres\n`);
const stop = async () => {
  await server.stop();
  await db.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
