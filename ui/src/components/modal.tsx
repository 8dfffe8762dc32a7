/**
 * The one modal dialog (a native `<dialog>` opened with showModal(): the page behind is inert, focus
 * stays inside, Escape cancels), for the template leave guard and the service delete dialog. The
 * title names it (aria-labelledby), the body describes it; the actions sit at the end, primary first
 * in reading order.
 */
import './modal.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useId } from './ui';

export function Modal(props: {
  open: boolean;
  title: string;
  /** Escape or a close(): the caller decides (usually it sets `open` to false). */
  onClose: () => void;
  /** `alertdialog` when it interrupts to ask about losing work (WAI-ARIA). */
  role?: 'dialog' | 'alertdialog';
  /** The buttons, in reading order. */
  actions: ComponentChildren;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId('modal');
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (props.open && !dialog.open) dialog.showModal();
    else if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class="modal"
      role={props.role === 'alertdialog' ? 'alertdialog' : undefined}
      aria-modal="true"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      onCancel={(e) => {
        // Escape: the state closes the dialog, so it never closes behind the caller's back.
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={`${id}-title`}>{props.title}</h2>
      <div id={`${id}-body`}>{props.children}</div>
      <div class="modal-actions">{props.actions}</div>
    </dialog>
  );
}
