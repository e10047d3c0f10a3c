-- DropTable
DROP TABLE "RateLimit";
