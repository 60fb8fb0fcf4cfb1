// crux's version, as package.json gives it (doctor, --version, the store's meta).
export const VERSION = '0.1.0';
