-- AlterTable
ALTER TABLE "SamlConnection" ADD COLUMN "decryptionKey" TEXT;
ALTER TABLE "SamlConnection" ADD COLUMN "encryptionCert" TEXT;
