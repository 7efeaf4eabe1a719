using Compression.Dictionaries;
using Xunit;

namespace Compression.Core.Tests.Dictionaries;

public sealed class SampleReservoirTests
{
    [Fact]
    public void TakeSequencedSnapshot_NumbersSamplesInOfferOrder_AcrossSnapshots()
    {
        var reservoir = new SampleReservoir(maxCount: 100, maxBytes: 1 << 20, maxDocumentSize: 1024, new Random(1));
        for (int i = 0; i < 10; i++) reservoir.Offer([(byte)i, 1, 2]);
        var first = reservoir.TakeSequencedSnapshot();
        Assert.Equal(Enumerable.Range(1, 10).Select(i => (long)i), first.Select(s => s.Sequence));
        Assert.All(first, s => Assert.Equal((byte)(s.Sequence - 1), s.Document[0]));

        // Samples stay across a snapshot; the ones offered after it carry higher numbers, so a training run can tell
        // which samples the previous run saw (TrainingCoordinator holds out from those it did not).
        long seen = reservoir.Offered;
        for (int i = 10; i < 15; i++) reservoir.Offer([(byte)i, 1, 2]);
        var second = reservoir.TakeSequencedSnapshot();
        Assert.Equal(15, second.Length);
        Assert.Equal(5, second.Count(s => s.Sequence > seen));
        Assert.Equal(15, reservoir.Offered);
    }

    [Fact]
    public void Offer_DocumentsOverTheSizeCapOrEmpty_AreNotNumbered()
    {
        var reservoir = new SampleReservoir(maxCount: 100, maxBytes: 1 << 20, maxDocumentSize: 4, new Random(1));
        reservoir.Offer([]);
        reservoir.Offer([1, 2, 3, 4, 5]);
        reservoir.Offer([1, 2, 3]);
        Assert.Equal(1, reservoir.Offered);
        Assert.Single(reservoir.TakeSequencedSnapshot(), s => s.Sequence == 1);
    }

    [Fact]
    public void TakeSequencedSnapshot_StartsANewRecencyWindow_SoNewDocumentsDisplaceOldOnes()
    {
        // Algorithm R over the documents since the last snapshot: after 1,000 old documents and a snapshot, 100 new ones
        // are documents 101 to 200 of the window, and about half the samples are new. Without the new window they would
        // be documents 1,001 to 1,100 of one long stream, and about one sample in eleven would be new.
        var reservoir = new SampleReservoir(maxCount: 100, maxBytes: 1 << 20, maxDocumentSize: 1024, new Random(2));
        for (int i = 0; i < 1000; i++) reservoir.Offer([0, 1, 2]);
        reservoir.TakeSequencedSnapshot();
        for (int i = 0; i < 100; i++) reservoir.Offer([1, 1, 2]);
        var samples = reservoir.TakeSequencedSnapshot();
        Assert.Equal(100, samples.Length);
        int newer = samples.Count(s => s.Document[0] == 1);
        Assert.InRange(newer, 35, 65);
    }
}
