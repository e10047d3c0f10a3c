// The app's own Arabic text: the same keys as ./en.ts, merged with the layer's
// ../catalogues/ar.ts at load (../merge.ts). docs/features/languages.md
import type { AppCatalogue } from "./en";

export const appAr: AppCatalogue = {
  // The example page for developers (app/routes/examples/session.tsx).
  "example.session.title": "مثال على الجلسة",
  "example.session.fromPage": "من بيانات الصفحة (useSession من ~/auth/react)",
  "example.session.fromNextAuth": "من ‎/auth/session (useSession من next-auth/react)",
  "example.session.signedInAs": "تم تسجيل الدخول باسم {address}.",
  "example.session.signedOut": "لم يتم تسجيل الدخول.",
  "example.session.loading": "جارٍ التحميل…",
};
