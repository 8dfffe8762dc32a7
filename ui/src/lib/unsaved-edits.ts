/**
 * Which screens hold unsaved edits now (issue 29), for what happens outside them: signing out
 * asks first while any does (components/sign-out-guard.tsx). A screen says so with
 * `useUnsavedEdits(dirty)` (the template editor through its leave guard, the service form); the
 * set empties as they unmount. Module state, not a context: one shell, one page at a time.
 */
import { useEffect, useId } from 'preact/hooks';

const dirtyScreens = new Set<string>();

/** Whether any mounted screen holds unsaved edits. */
export const hasUnsavedEdits = (): boolean => dirtyScreens.size > 0;

export function useUnsavedEdits(dirty: boolean): void {
  const id = useId();
  useEffect(() => {
    if (!dirty) return;
    dirtyScreens.add(id);
    return () => {
      dirtyScreens.delete(id);
    };
  }, [dirty, id]);
}
