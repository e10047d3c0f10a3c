-- AlterTable
ALTER TABLE "User" ADD COLUMN "devicesResetAt" DATETIME;
ALTER TABLE "User" ADD COLUMN "locale" TEXT;
