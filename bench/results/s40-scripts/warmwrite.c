#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
	size_t sz=(size_t)512<<20, n=sz/4096; int fd=open(argv[1],O_RDWR|O_CREAT,0600);
	char*b=aligned_alloc(4096,1<<20); memset(b,0x5a,1<<20);
	unsigned *ord=malloc(n*sizeof*ord); for(size_t i=0;i<n;i++)ord[i]=i;
	srand(1); for(size_t i=n-1;i>0;i--){size_t j=rand()%(i+1);unsigned t=ord[i];ord[i]=ord[j];ord[j]=t;}
	for(size_t o=0;o<sz;o+=1<<20) pwrite(fd,b,1<<20,o); fdatasync(fd);
	for(int round=0;round<6;round++){
		int warm=round%3;
		fdatasync(fd); posix_fadvise(fd,0,sz,POSIX_FADV_DONTNEED);
		if(warm==1) for(size_t o=0;o<sz;o+=1<<20) pread(fd,b,1<<20,o);
		if(warm==2){posix_fadvise(fd,0,sz,POSIX_FADV_RANDOM); for(size_t o=0;o<sz;o+=4096) pread(fd,b,4096,o); posix_fadvise(fd,0,sz,POSIX_FADV_NORMAL);}
		double t0=now();
		for(size_t i=0;i<n;i++) pwrite(fd,b,4096,(off_t)ord[i]*4096);
		double t1=now(); fdatasync(fd); double t2=now();
		printf("%s: %.2f us a write, sync %.0f ms\n",warm==1?"warm (1 MiB reads, readahead)":warm==2?"warm (4 KiB reads, FADV_RANDOM)":"cold",(t1-t0)/n*1e6,(t2-t1)*1e3);
	}
	return 0;
}
