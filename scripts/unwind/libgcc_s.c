/* scripts/unwind/libgcc_s.c: a stand-in for libgcc_s.so.1 that the release module links
 * against (scripts/package.sh), so that its unwinding symbols are the system's libgcc_s at
 * run time, with the versions libgcc_s.map gives them. Never loaded: only linked against.
 *
 * Why: zig (cargo-zigbuild) otherwise links its own libunwind into the module. LuaJIT raises
 * a Lua error with the system's _Unwind_RaiseException (libgcc_s), which calls the module's
 * personality routine, which then called zig's _Unwind_* on libgcc's context: any Lua error
 * raised through the module's frames crashed Neovim. */
void _Unwind_Backtrace(void) {}
void _Unwind_DeleteException(void) {}
void _Unwind_GetDataRelBase(void) {}
void _Unwind_GetIP(void) {}
void _Unwind_GetIPInfo(void) {}
void _Unwind_GetLanguageSpecificData(void) {}
void _Unwind_GetRegionStart(void) {}
void _Unwind_GetTextRelBase(void) {}
void _Unwind_RaiseException(void) {}
void _Unwind_Resume(void) {}
void _Unwind_SetGR(void) {}
void _Unwind_SetIP(void) {}
void _Unwind_GetCFA(void) {}
void _Unwind_FindEnclosingFunction(void) {}
void _Unwind_ForcedUnwind(void) {}
void _Unwind_Resume_or_Rethrow(void) {}
