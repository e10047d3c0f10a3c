-- AlterTable
ALTER TABLE "SamlConnection" ADD COLUMN     "decryptionKey" TEXT,
ADD COLUMN     "encryptionCert" TEXT;
