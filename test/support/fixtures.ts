import { randomBytes } from 'node:crypto';
import { Document, Packer, Paragraph } from 'docx';
import JSZip from 'jszip';
import { PDFDocument, PDFHexString, StandardFonts } from 'pdf-lib';

/** A real two-page PDF with a text layer: one line of `pages[i]` per page. */
export async function pdfFixture(pages: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage([595, 842]);
    text.split('\n').forEach((line, i) => {
      page.drawText(line, { x: 50, y: 780 - i * 16, size: 11, font });
    });
  }
  return Buffer.from(await pdf.save());
}

/**
 * A PDF that needs a password to open: the standard security handler (RC4, revision 2) with random
 * owner and user keys, so the empty user password a reader tries first does not match.
 */
export async function encryptedPdfFixture(text: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.addPage([595, 842]).drawText(text, { x: 50, y: 780, size: 11, font });
  const ctx = pdf.context;
  const key = () => PDFHexString.of(randomBytes(32).toString('hex'));
  ctx.trailerInfo.Encrypt = ctx.register(
    ctx.obj({ Filter: 'Standard', V: 1, R: 2, Length: 40, P: -4, O: key(), U: key() }),
  );
  const id = PDFHexString.of(randomBytes(16).toString('hex'));
  ctx.trailerInfo.ID = ctx.obj([id, id]);
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

/** A real DOCX (Office Open XML) with one paragraph per entry. */
export async function docxFixture(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: paragraphs.map((p) => new Paragraph(p)) }] });
  return Buffer.from(await Packer.toBuffer(doc));
}

/** A zip named like a DOCX whose one entry inflates to `bytes` (a decompression bomb, ~0.1% compressed). */
export async function zipBomb(bytes: number): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('[Content_Types].xml', '<Types/>');
  zip.file('word/document.xml', Buffer.alloc(bytes, 0x20));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 } });
}
