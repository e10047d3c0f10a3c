-- CreateTable
CREATE TABLE "GlobalSessionCutoff" (
    "id" TEXT NOT NULL,
    "notBefore" TIMESTAMP(3) NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "GlobalSessionCutoff_pkey" PRIMARY KEY ("id")
);
