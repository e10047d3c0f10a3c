// The app's own Arabic text: the same keys as ./en.ts, merged with the layer's
// ../catalogues/ar.ts at load (../merge.ts). docs/features/languages.md
import type { AppCatalogue } from "./en";

export const appAr: AppCatalogue = {
  // The example page for developers (app/routes/examples/session.tsx).
  "example.session.title": "مثال على الجلسة",
  "example.session.fromPage": "من بيانات الصفحة (⁦useSession⁩ من ⁦~/auth/react⁩)",
  "example.session.fromNextAuth": "من ⁦/auth/session⁩ (⁦useSession⁩ من ⁦next-auth/react⁩)",
  "example.session.signedInAs": "تم تسجيل الدخول باسم {address}.",
  "example.session.signedOut": "لم يتم تسجيل الدخول.",
  "example.session.loading": "جارٍ التحميل…",
  // The example pages of docs/build-your-app.md (app/routes/examples/profile.tsx, editors.tsx).
  "example.profile.title": "ملفك الشخصي",
  "example.profile.confirm": "تأكيد أنني أنا",
  "example.profile.confirmed": "تم التأكيد: سجّلت الدخول قبل لحظات.",
  "example.profile.refused": "انتهت صلاحية هذا النموذج. أعد تحميل الصفحة وأرسله مرة أخرى.",
  "example.editors.title": "المحررون",
  "example.editors.role": "دورك: {role}.",
  "example.editors.publish": "نشر",
  "example.editors.published": "تم النشر.",
  // The label of the example role of app/auth.config.ts: each role the app adds has "admin.role.<name>" here, in every language.
  "admin.role.editor": "محرر",
};
