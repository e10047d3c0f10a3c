-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_VerificationToken" (
    "identifier" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "expires" DATETIME NOT NULL,
    "purpose" TEXT NOT NULL DEFAULT 'signin',
    "userId" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "requestId" TEXT,
    "codeHash" TEXT,
    "codeExpires" DATETIME,
    "codeAttempts" INTEGER NOT NULL DEFAULT 0,
    "passwordHash" TEXT,
    "name" TEXT
);
INSERT INTO "new_VerificationToken" ("createdAt", "expires", "identifier", "purpose", "tokenHash", "userId") SELECT "createdAt", "expires", "identifier", "purpose", "tokenHash", "userId" FROM "VerificationToken";
DROP TABLE "VerificationToken";
ALTER TABLE "new_VerificationToken" RENAME TO "VerificationToken";
CREATE UNIQUE INDEX "VerificationToken_requestId_key" ON "VerificationToken"("requestId");
CREATE INDEX "VerificationToken_expires_idx" ON "VerificationToken"("expires");
CREATE UNIQUE INDEX "VerificationToken_identifier_tokenHash_key" ON "VerificationToken"("identifier", "tokenHash");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
