-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'database',
ADD COLUMN     "method" TEXT,
ADD COLUMN     "revokedAt" TIMESTAMP(3),
ALTER COLUMN "tokenHash" DROP NOT NULL;

-- AlterTable
ALTER TABLE "AuthEvent" ADD COLUMN     "userAgent" TEXT;

-- CreateTable
CREATE TABLE "SessionCutoff" (
    "userId" TEXT NOT NULL,
    "notBefore" TIMESTAMP(3) NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SessionCutoff_pkey" PRIMARY KEY ("userId")
);

-- CreateIndex
CREATE INDEX "SessionCutoff_notBefore_idx" ON "SessionCutoff"("notBefore");

-- CreateIndex
CREATE INDEX "Session_revokedAt_idx" ON "Session"("revokedAt");

-- AddForeignKey
ALTER TABLE "SessionCutoff" ADD CONSTRAINT "SessionCutoff_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
