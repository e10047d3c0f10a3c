-- CreateTable
CREATE TABLE "SessionRevocation" (
    "sessionId" TEXT NOT NULL PRIMARY KEY,
    "revokedAt" DATETIME NOT NULL,
    "expires" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "SessionRevocation_revokedAt_idx" ON "SessionRevocation"("revokedAt");

-- CreateIndex
CREATE INDEX "SessionRevocation_expires_idx" ON "SessionRevocation"("expires");
