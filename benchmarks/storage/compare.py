"""Compares two runs of the storage harness's writer (StorageLoad), corpus by corpus: plain.bson byte for byte, and
compressed.bson document by document with each envelope's dictionary id varint taken out (ids are random per run; the
document and binary length fields are left out with it). Usage:
    python3 benchmarks/storage/compare.py OLD NEW corpus...
where OLD/corpus and NEW/corpus each hold a StorageLoad output folder (benchmarks/storage/out/work/corpus, or
`dotnet Compression.StorageLoad.dll corpus.jsonl DIR`). Exit 1 when anything differs."""
import sys, struct
def varint(b, i):
    v=0; s=0
    while True:
        x=b[i]; i+=1; v|=(x&0x7f)<<s; s+=7
        if x<0x80: return v,i
def docs(path):
    b=open(path,'rb').read(); i=0
    while i<len(b):
        n=struct.unpack_from('<i',b,i)[0]; yield b[i:i+n]; i+=n
def mask(doc):
    # find the _z binary element: type 0x05, name "_z\0", int32 len, subtype, payload
    k=doc.find(b'\x05_z\x00')
    if k<0: return doc, None
    n=struct.unpack_from('<i',doc,k+4)[0]; p=k+9; env=bytearray(doc[p:p+n])
    if env[0]!=0xc5: return doc, None
    hb=env[1]; i=2
    _,i=varint(env,i)  # declared length
    did=None
    if hb & 0x80:  # dictionary id present
        s=i; did,i=varint(env,i); del env[s:i]
    return (doc[4:k+4], bytes(env), doc[p+n:]), did
old, new = sys.argv[1], sys.argv[2]
differs = False
for c in sys.argv[3:]:
    o=f'{old}/{c}'; n=f'{new}/{c}'
    po=open(o+'/plain.bson','rb').read(); pn=open(n+'/plain.bson','rb').read()
    do=list(docs(o+'/compressed.bson')); dn=list(docs(n+'/compressed.bson'))
    same=sum(1 for a,b in zip(do,dn) if mask(a)[0]==mask(b)[0])
    differs |= po != pn or len(do) != len(dn) or same != len(do)
    print(f"{c}: plain identical {po==pn}; compressed {len(do)} vs {len(dn)} docs, {sum(map(len,do))} vs {sum(map(len,dn))} bytes, identical after masking dictionary ids: {same}/{len(do)}")
sys.exit(1 if differs else 0)
