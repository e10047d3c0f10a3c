-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "authenticatedAt" TIMESTAMP(3),
ADD COLUMN     "credentialRef" TEXT;

-- CreateTable
CREATE TABLE "MailQueue" (
    "id" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" TIMESTAMP(3),
    "sentAt" TIMESTAMP(3),
    "lastError" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MailQueue_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "MailQueue_sentAt_nextAttemptAt_idx" ON "MailQueue"("sentAt", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "Session_credentialRef_idx" ON "Session"("credentialRef");
