-- CreateTable
CREATE TABLE "LimitCounter" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "points" INTEGER NOT NULL,
    "expire" DATETIME
);

-- CreateIndex
CREATE INDEX "LimitCounter_expire_idx" ON "LimitCounter"("expire");
