-- AlterTable
ALTER TABLE "VerificationToken" ADD COLUMN     "codeAttempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "codeExpires" TIMESTAMP(3),
ADD COLUMN     "codeHash" TEXT,
ADD COLUMN     "name" TEXT,
ADD COLUMN     "passwordHash" TEXT,
ADD COLUMN     "requestId" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "VerificationToken_requestId_key" ON "VerificationToken"("requestId");
