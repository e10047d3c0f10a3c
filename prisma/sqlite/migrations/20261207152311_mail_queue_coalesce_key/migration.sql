-- AlterTable
ALTER TABLE "MailQueue" ADD COLUMN "coalesceKey" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "MailQueue_coalesceKey_key" ON "MailQueue"("coalesceKey");
