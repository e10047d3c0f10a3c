-- AlterTable
ALTER TABLE "Password" ADD COLUMN     "singleFactorFloorMet" INTEGER;
