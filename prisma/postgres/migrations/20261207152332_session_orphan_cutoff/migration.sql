-- CreateTable
CREATE TABLE "SessionOrphanCutoff" (
    "userId" TEXT NOT NULL,
    "notBefore" TIMESTAMP(3) NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SessionOrphanCutoff_pkey" PRIMARY KEY ("userId")
);

-- CreateIndex
CREATE INDEX "SessionOrphanCutoff_notBefore_idx" ON "SessionOrphanCutoff"("notBefore");

-- AddForeignKey
ALTER TABLE "SessionOrphanCutoff" ADD CONSTRAINT "SessionOrphanCutoff_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
