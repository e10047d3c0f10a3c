-- CreateTable
CREATE TABLE "GlobalSessionCutoff" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "notBefore" DATETIME NOT NULL,
    "expires" DATETIME NOT NULL
);
