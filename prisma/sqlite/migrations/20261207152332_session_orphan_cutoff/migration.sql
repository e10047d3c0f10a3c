-- CreateTable
CREATE TABLE "SessionOrphanCutoff" (
    "userId" TEXT NOT NULL PRIMARY KEY,
    "notBefore" DATETIME NOT NULL,
    "expires" DATETIME NOT NULL,
    CONSTRAINT "SessionOrphanCutoff_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "SessionOrphanCutoff_notBefore_idx" ON "SessionOrphanCutoff"("notBefore");
