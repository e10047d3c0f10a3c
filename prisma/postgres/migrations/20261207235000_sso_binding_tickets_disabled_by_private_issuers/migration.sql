-- AlterTable
ALTER TABLE "User" ADD COLUMN     "disabledBy" TEXT;

-- AlterTable
ALTER TABLE "SamlRequest" ADD COLUMN     "bindingHash" TEXT;

-- AlterTable
ALTER TABLE "OidcConnection" ADD COLUMN     "allowPrivateAddress" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "SamlTicket" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "bindingHash" TEXT NOT NULL,
    "userId" TEXT,
    "callbackUrl" TEXT NOT NULL,
    "person" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SamlTicket_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SamlTicket_expires_idx" ON "SamlTicket"("expires");
