-- AlterTable
ALTER TABLE "AuthEvent" ADD COLUMN "userAgent" TEXT;

-- CreateTable
CREATE TABLE "SessionCutoff" (
    "userId" TEXT NOT NULL PRIMARY KEY,
    "notBefore" DATETIME NOT NULL,
    "expires" DATETIME NOT NULL,
    CONSTRAINT "SessionCutoff_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "kind" TEXT NOT NULL DEFAULT 'database',
    "tokenHash" TEXT,
    "userId" TEXT NOT NULL,
    "method" TEXT,
    "expires" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "userAgent" TEXT,
    "revokedAt" DATETIME,
    CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Session" ("createdAt", "expires", "id", "lastUsedAt", "tokenHash", "userAgent", "userId") SELECT "createdAt", "expires", "id", "lastUsedAt", "tokenHash", "userAgent", "userId" FROM "Session";
DROP TABLE "Session";
ALTER TABLE "new_Session" RENAME TO "Session";
CREATE UNIQUE INDEX "Session_tokenHash_key" ON "Session"("tokenHash");
CREATE INDEX "Session_userId_idx" ON "Session"("userId");
CREATE INDEX "Session_expires_idx" ON "Session"("expires");
CREATE INDEX "Session_revokedAt_idx" ON "Session"("revokedAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "SessionCutoff_notBefore_idx" ON "SessionCutoff"("notBefore");
