-- CreateTable
CREATE TABLE "LimitCounter" (
    "key" TEXT NOT NULL,
    "points" INTEGER NOT NULL,
    "expire" TIMESTAMP(3),

    CONSTRAINT "LimitCounter_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "LimitCounter_expire_idx" ON "LimitCounter"("expire");
