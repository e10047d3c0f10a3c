-- AlterTable
ALTER TABLE "Session" ADD COLUMN "authenticatedAt" DATETIME;
ALTER TABLE "Session" ADD COLUMN "credentialRef" TEXT;

-- CreateTable
CREATE TABLE "MailQueue" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "recipient" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" DATETIME,
    "sentAt" DATETIME,
    "lastError" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "MailQueue_sentAt_nextAttemptAt_idx" ON "MailQueue"("sentAt", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "Session_credentialRef_idx" ON "Session"("credentialRef");
