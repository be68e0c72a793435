#!/usr/bin/env python3
"""vote_eval.py DIR BITS - experiments only (docs/quality.md, "Candidates
measured"): rebuilds fingerprints from the per-document votes written by
tools/vote_dump.c and scores them like ../shared/corpus/score.py (best F1 over
k <= 12 at 64 bits, k <= 24 at 128; unrelated pairs of eval/natural).

DIR holds NAME.BITS = vote_dump BITS < SET.jsonl for natural, short_zh,
short_en (from eval/) and en, zh (the general corpus, for the centering means).
Prints, uncentered and centered (the means computed here as tools/gen_center.c
does), the scores of the SimHash votes; votes() takes the variants tried
(centering strength, blend zone). Needs numpy (Debian's python3-numpy).
Environment: SIMHASH_CORPUS (default ../shared/corpus).
"""
import collections
import json
import os
import sys

import numpy as np

C = os.environ.get('SIMHASH_CORPUS', '../shared/corpus')
POP16=np.array([bin(i).count('1') for i in range(65536)],dtype=np.uint8)

def load(path,bits):
    if os.path.exists(path+'.npz') and os.path.getmtime(path+'.npz')>os.path.getmtime(path):
        z=np.load(path+'.npz',allow_pickle=True); d={k:z[k] for k in z.files}; d['ids']=list(d['ids']); d['bits']=bits; return d
    d=_load(path,bits); np.savez(path+'.npz',**{k:v for k,v in d.items() if k!='bits'}); return d
def _load(path,bits):
    ids=[];rows=[]
    with open(path) as f:
        for line in f:
            p=line.rstrip('\n').split('\t')
            ids.append(p[0]); rows.append(p[1:])
    a=np.array(rows,dtype=np.float64)
    d=dict(ids=ids,nchars=a[:,0],nl=a[:,1],nc=a[:,2],ws=a[:,3],
           cl=a[:,4:4+bits],cc=a[:,4+bits:4+2*bits],vs=a[:,4+2*bits:4+3*bits],bits=bits)
    o=4+3*bits
    for q,nm in enumerate(['sh3b','sh2l','sh4l','w1t','w1b']):
        if a.shape[1]>o:
            d['W_'+nm]=a[:,o]; d['v_'+nm]=a[:,o+1:o+1+bits]; o+=1+bits
    return d

def share(d,L0=256,L1=768):
    L=d['nchars']
    a=np.clip((L1-L)/(L1-L0),0,1)
    a=np.where(d['ws']==0,1.0,a)
    return a

def votes(d,mu=None,mus=None,L0=256,L1=768,cw=1.0,sh=None,cx=None):
    n=d['nl']+d['nc']; nn=np.maximum(n,1)[:,None]
    vc=(2*(d['cl']+d['cc'])-n[:,None])/nn
    if mu is not None:
        vc=vc-(d['nl'][:,None]*mu[0]+d['nc'][:,None]*mu[1])/nn*cw
    ws=np.maximum(d['ws'],1)[:,None]
    vs=d['vs']/ws
    if sh is not None:
        vs=sum(c*d['v_'+nm]/np.maximum(d['W_'+nm],1)[:,None] for nm,c in sh.items())
        if mus is not None and not isinstance(mus,np.ndarray): mus=None
    if cx is not None:
        vc=vc+sum(c*d['v_'+nm]/np.maximum(d['W_'+nm],1)[:,None] for nm,c in cx.items())
    if mus is not None:
        vs=vs-mus
    a=share(d,L0,L1)[:,None]
    return a*vc+(1-a)*vs

def pack(s):
    b=(s>0).astype(np.uint64)
    N,bits=b.shape
    w=np.zeros((N,bits//64),dtype=np.uint64)
    for j in range(bits):
        w[:,j>>6]|=b[:,j]<<np.uint64(j&63)
    return w

def pc(x):
    # x uint64 array [...,W]
    v=x.view(np.uint16)
    return POP16[v].reshape(x.shape[:-1]+(-1,)).sum(-1,dtype=np.int32)

def dist_pairs(w,ia,ib):
    return pc(w[ia]^w[ib])

def hist_all(w,kmax):
    N=len(w); h=np.zeros(kmax+1,dtype=np.int64)
    for i in range(N-1):
        d=pc(w[i+1:]^w[i])
        h+=np.bincount(d[d<=kmax],minlength=kmax+1)[:kmax+1]
    return h

_truth={}
def truth(name,ids,thr=0.8):
    key=(name,thr)
    if key in _truth: return _truth[key]
    idx={x:i for i,x in enumerate(ids)}
    if name=='natural':
        T=[];J=[]
        for line in open(C+'/eval/natural_truth.tsv'):
            a,b,j=line.split('\t'); T.append((idx[a],idx[b])); J.append(float(j))
        T=np.array(T);J=np.array(J)
        res=(T[J>=thr-1e-9],None,T)
    else:
        cl=collections.defaultdict(list)
        for line in open(C+'/eval/'+name+'.jsonl'):
            o=json.loads(line); cl[o['cluster']].append(idx[o['id']])
        deb=set()
        for line in open(C+'/eval/'+name+'_debatable.tsv'):
            p=line.rstrip('\n').split('\t')
            if p[0]=='id_a': continue
            a,b=idx[p[0]],idx[p[1]]; deb.add((min(a,b),max(a,b)))
        T=[]
        for m in cl.values():
            for x in range(len(m)):
                for y in range(x+1,len(m)):
                    a,b=min(m[x],m[y]),max(m[x],m[y])
                    if (a,b) not in deb: T.append((a,b))
        D=np.array(sorted(deb))
        res=(np.array(T),D,None)
    _truth[key]=res
    return res

def bestf1(name,ids,w,kmax,thr=0.8):
    T,D,_=truth(name,ids,thr)
    h=np.cumsum(hist_all(w,kmax))
    dt=dist_pairs(w,T[:,0],T[:,1])
    tp=np.cumsum(np.bincount(dt[dt<=kmax],minlength=kmax+1)[:kmax+1])
    pred=h.copy()
    if D is not None and len(D):
        dd=dist_pairs(w,D[:,0],D[:,1])
        pred-=np.cumsum(np.bincount(dd[dd<=kmax],minlength=kmax+1)[:kmax+1])
    f1=2*tp/(pred+len(T))
    k=int(np.argmax(f1))
    return float(f1[k]),k

def unrelated(ids,w,lang,n=100000,seed=1):
    _,_,A=truth('natural',ids)
    rel=set(map(tuple,A.tolist()))
    sel=np.array([i for i,x in enumerate(ids) if (x.startswith('man-zh'))==(lang=='zh')])
    rng=np.random.default_rng(seed)
    a=rng.choice(sel,3*n);b=rng.choice(sel,3*n)
    keep=[(x,y) for x,y in zip(a,b) if x!=y and (min(x,y),max(x,y)) not in rel][:n]
    P=np.array(keep)
    d=dist_pairs(w,P[:,0],P[:,1])
    return float(d.mean()),int(np.percentile(d,1)),float(np.percentile(d,0.1))


def tables(d, bits):
    """The centering means per class from the dumps of the general corpus."""
    out = []
    for key, nk in (('cl', 'nl'), ('cc', 'nc')):
        num = 0
        den = 0
        for name in ('en', 'zh'):
            D = load(os.path.join(d, '%s.%d' % (name, bits)), bits)
            m = D[nk] > 0
            num = num + ((2 * D[key][m] - D[nk][m][:, None]) / D[nk][m][:, None]).sum(0)
            den += m.sum()
        out.append(num / den)
    return out


def main():
    d, bits = sys.argv[1], int(sys.argv[2])
    km = 12 if bits == 64 else 24
    mu = tables(d, bits)
    for label, kw in (('uncentered', {}), ('centered', {'mu': mu})):
        r = []
        for n in ('natural', 'short_zh', 'short_en'):
            D = load(os.path.join(d, '%s.%d' % (n, bits)), bits)
            w = pack(votes(D, **kw))
            r.append('%s %.3f (k=%d)' % ((n,) + bestf1(n, D['ids'], w, km)))
            if n == 'natural':
                r.append('unrelated en %.2f / %d / %.0f, zh %.2f / %d / %.0f'
                         % (unrelated(D['ids'], w, 'en') + unrelated(D['ids'], w, 'zh')))
        print(label + ': ' + ' | '.join(r), flush=True)


if __name__ == '__main__':
    main()
