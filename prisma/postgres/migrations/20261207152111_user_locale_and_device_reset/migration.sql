-- AlterTable
ALTER TABLE "User" ADD COLUMN     "devicesResetAt" TIMESTAMP(3),
ADD COLUMN     "locale" TEXT;
