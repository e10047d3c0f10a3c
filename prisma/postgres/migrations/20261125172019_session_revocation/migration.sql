-- CreateTable
CREATE TABLE "SessionRevocation" (
    "sessionId" TEXT NOT NULL,
    "revokedAt" TIMESTAMP(3) NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SessionRevocation_pkey" PRIMARY KEY ("sessionId")
);

-- CreateIndex
CREATE INDEX "SessionRevocation_revokedAt_idx" ON "SessionRevocation"("revokedAt");

-- CreateIndex
CREATE INDEX "SessionRevocation_expires_idx" ON "SessionRevocation"("expires");
