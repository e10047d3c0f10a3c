-- The OAuth payload table's lookup-only columns (ADR 180): uid (sessions and interactions),
-- userCode (device codes) and accountId are null on most rows (every token answer's rows have no
-- uid or userCode; a kept refresh answer has no accountId). Their indexes hold only the rows that
-- have them, so writing such a row leaves those B-trees untouched. A lookup by `= value` implies
-- `IS NOT NULL`: both databases still use these indexes for it.

-- DropIndex
DROP INDEX "OAuthPayload_uid_idx";

-- DropIndex
DROP INDEX "OAuthPayload_userCode_idx";

-- DropIndex
DROP INDEX "OAuthPayload_accountId_idx";

-- CreateIndex
CREATE INDEX "OAuthPayload_uid_idx" ON "OAuthPayload"("uid") WHERE "uid" IS NOT NULL;

-- CreateIndex
CREATE INDEX "OAuthPayload_userCode_idx" ON "OAuthPayload"("userCode") WHERE "userCode" IS NOT NULL;

-- CreateIndex
CREATE INDEX "OAuthPayload_accountId_idx" ON "OAuthPayload"("accountId") WHERE "accountId" IS NOT NULL;
